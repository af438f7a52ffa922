-- Reserved: another change (tenant MCP servers) claims number 003 on PostgreSQL; a no-op
-- here keeps the numbers without gaps until both are merged.
SELECT 1;
