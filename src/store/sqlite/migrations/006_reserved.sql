-- Reserved: another change claims number 006 (a no-op here keeps the numbers without gaps).
SELECT 1;
