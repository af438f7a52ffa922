// Types for scripts/bundle.mjs, which test/helpers/keel-test-serve-entry.ts imports.
import type { Metafile } from 'esbuild';

export function bundle(options: { entry: string; outdir: string }): Promise<Metafile | null>;
