// Bundles compiled JavaScript (dist/, or the compiled test entry beside it) with esbuild
// into a few ESM files: keel's ~300 modules and the ~1,100 files of the packages it
// loads become one file per entry plus shared chunks that dynamic import()s load on
// demand. Node 20 resolves, stats, reads and links every module file on its own, so a
// `keel serve` start took ~1.3 s of CPU from dist/'s modules and ~0.8 s from the bundle
// (measured, docs/benchmarks.md); every CLI command starts faster the same way.
//
// What stays outside the bundle, loaded by Node as before:
// - native addons and what loads them (NATIVE): a .node file cannot be bundled;
// - packages that find their own files at run time (FINDS_OWN_FILES: __dirname,
//   __filename, import.meta, require.resolve), since inside the bundle those would name
//   the bundle's folder. The build fails when a bundled package does any of that, so a
//   new dependency cannot break this silently;
// - keel's own files that locate siblings (migrations, workers, console assets) keep
//   doing so: their `import.meta.url` becomes the URL of the compiled file the bundle
//   was made from, written relative to the bundle (the bundle sits beside dist/, so an
//   installed keel that moved still finds them).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, relative, sep } from 'node:path';

const NATIVE = ['better-sqlite3', 'sqlite-vec', 'onnxruntime-node', '@huggingface/transformers'];
// OpenTelemetry's SDK loads only when tracing is configured; outside the bundle that stays
// visible to Node's module hooks (test/telemetry-otlp.test.ts watches for it).
const LOADED_BY_NAME = ['@opentelemetry/*'];
// pino's transports (`keel serve --pretty`) start a worker from a file beside pino's own.
const FINDS_OWN_FILES = ['pino', 'thread-stream', 'pino-pretty'];
const LOCATING = /__dirname|__filename|import\.meta|require\.resolve/;
// Package files that mention those names and were read: harmless inside the bundle.
const REVIEWED = new Map([
  ['undici/index.js', 'reads __filename under a typeof guard, for stack traces only'],
  [
    '@fastify/swagger/lib/util/read-package-json.js',
    "reads its package.json in a try/catch for a default title and version; keel's document sets both",
  ],
]);

/**
 * Bundles `entry` into `outdir` (entry as `<name>.js`, shared code as `chunk-*.js`).
 * Returns esbuild's metafile (what went in, what each output imports), or null, having
 * printed why, when esbuild is not installed (keel then runs the unbundled modules);
 * throws when bundling fails.
 */
export async function bundle({ entry, outdir }) {
  let esbuild;
  try {
    esbuild = createRequire(import.meta.url)('esbuild');
  } catch {
    console.error('bundle: esbuild is not installed; keel runs the unbundled modules');
    return null;
  }
  const offenders = new Set();
  const locateFromOriginal = {
    name: 'locate-from-original',
    setup(build) {
      build.onLoad({ filter: /\.(js|mjs|cjs)$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        const inPackage = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+[\\/].*)$/.exec(
          args.path,
        )?.[1];
        if (inPackage !== undefined) {
          const file = inPackage.split(sep).join('/');
          if (LOCATING.test(text) && !REVIEWED.has(file)) offenders.add(file);
          return undefined;
        }
        if (!text.includes('import.meta.url')) return undefined;
        const fromBundle = relative(outdir, args.path).split(sep).join('/');
        return {
          contents: text.replaceAll(
            'import.meta.url',
            `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`,
          ),
          loader: 'js',
          resolveDir: dirname(args.path),
        };
      });
    },
  };
  const { metafile } = await esbuild.build({
    entryPoints: [entry],
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20', // package.json's engines: a bundle built on a newer Node still runs
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    external: [...NATIVE, ...LOADED_BY_NAME, ...FINDS_OWN_FILES],
    plugins: [locateFromOriginal],
    // The CommonJS packages inside call require() for Node's own modules.
    banner: {
      js: "import { createRequire as keelBundleRequire } from 'node:module'; const require = keelBundleRequire(import.meta.url);",
    },
    legalComments: 'linked',
    logLevel: 'warning',
    metafile: true,
  });
  if (offenders.size > 0) {
    throw new Error(
      `bundle: these package files may locate files at run time; keep their package outside the bundle (FINDS_OWN_FILES in scripts/bundle.mjs) or, once read, add them to REVIEWED: ${[...offenders].join(', ')}`,
    );
  }
  return metafile;
}
