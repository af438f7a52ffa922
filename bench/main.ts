// `npm run bench -- <name>…`: runs the named benchmarks (all when none is named, except
// the soak and stream-latency, which take minutes: `npm run bench -- soak`).

import { runApprovalsBench } from './approvals.ts';
import { runCheckpointBench } from './checkpoint.ts';
import { runCompactionBench } from './compaction.ts';
import { runDeliveryBench } from './delivery.ts';
import { runFairnessBench } from './fairness.ts';
import { runMcpBench } from './mcp.ts';
import { runMemoryBench } from './memory.ts';
import { runModelHttpBench } from './model-http.ts';
import { runOverheadBench } from './overhead.ts';
import { runScaleBench } from './scale.ts';
import { runTelemetryBench } from './telemetry.ts';
import { runTenantExportBench } from './tenant-export.ts';
import { runSoakBench } from './soak.ts';
import { runStreamLatencyBench } from './stream-latency.ts';
import { runStorePortBench } from './store-port.ts';
import { runTurnsBench, runTurnsPostgresBench } from './turns.ts';
import { runWasmBench } from './wasm.ts';

const BENCHMARKS: Record<string, () => Promise<void>> = {
  approvals: runApprovalsBench,
  checkpoint: runCheckpointBench,
  compaction: runCompactionBench,
  delivery: runDeliveryBench,
  memory: runMemoryBench,
  mcp: runMcpBench,
  'model-http': runModelHttpBench,
  overhead: runOverheadBench,
  turns: runTurnsBench,
  'turns-pg': runTurnsPostgresBench,
  scale: runScaleBench,
  fairness: runFairnessBench,
  soak: runSoakBench,
  'stream-latency': runStreamLatencyBench,
  'store-port': runStorePortBench,
  wasm: runWasmBench,
  telemetry: runTelemetryBench,
  'tenant-export': runTenantExportBench,
};

const requested = process.argv.slice(2);
const names =
  requested.length > 0
    ? requested
    : Object.keys(BENCHMARKS).filter((name) => name !== 'soak' && name !== 'stream-latency');
for (const name of names) {
  const bench = BENCHMARKS[name];
  if (!bench) {
    console.error(`unknown benchmark "${name}"; known: ${Object.keys(BENCHMARKS).join(', ')}`);
    process.exit(2);
  }
  await bench();
}
