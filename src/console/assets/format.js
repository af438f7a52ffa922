// Formatters with no imports, so a module that only formats (views/event-summary.js)
// loads without preact: in the browser, and in the Node tests that import it.

export function duration(/** @type {number | null | undefined} */ ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

export function json(/** @type {unknown} */ value) {
  return JSON.stringify(value, null, 2);
}
