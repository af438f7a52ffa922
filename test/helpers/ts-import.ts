// The `node` flags that load TypeScript in a child process the way the test processes
// do (scripts/ts-register.mjs: esbuild, cached in node_modules/.cache/keel/ts/): about
// half a second of CPU less per start than tsx, and the child compiles nothing the suite
// already compiled.
//
//   spawn(process.execPath, [...TS_IMPORT, 'test/helpers/effect-sink.ts', …])
export const TS_IMPORT: readonly string[] = [
  '--import',
  new URL('../../scripts/ts-register.mjs', import.meta.url).href,
];
