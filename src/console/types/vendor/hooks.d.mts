// Types of `/console/vendor/hooks.mjs`: preact/hooks (see preact.d.mts).
export * from 'preact/hooks';
