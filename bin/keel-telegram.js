#!/usr/bin/env node
// The Telegram adapter (adapters/telegram): tsx in this same process, like bin/keel.js.
import { register } from 'tsx/esm/api';

register();
await import('../adapters/telegram/src/main.ts');
