#!/usr/bin/env node
// Registers tsx in this same process (no child process, so signals reach keel itself)
// and runs the TypeScript CLI: a checkout needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
