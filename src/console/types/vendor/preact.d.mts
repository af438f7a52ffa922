// Types of the browser module `/console/vendor/preact.mjs` (the installed preact,
// served by src/console/plugin.ts) for the console's type check (tsconfig.console.json).
export * from 'preact';
