// Types of `/console/vendor/eventsource-parser.mjs`: the installed eventsource-parser.
export * from 'eventsource-parser';
