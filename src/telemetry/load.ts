// Picks the run tracer from `[telemetry]` (src/config.ts). No endpoint → the no-op
// tracer, and the OpenTelemetry SDK is not even imported: the import below is dynamic
// and happens only when an endpoint is configured (test/telemetry-otlp.test.ts checks).

import type { TelemetrySettings } from '../config.ts';
import type { RunTracer } from '../runtime/tracer.ts';
import { noopTracer } from '../runtime/tracer.ts';
import type { createOtelTracer } from './otel-tracer.ts';

interface OtelModule {
  createOtelTracer: typeof createOtelTracer;
}

export async function loadRunTracer(
  settings: TelemetrySettings,
  importer: () => Promise<OtelModule> = () => import('./otel-tracer.ts'),
): Promise<RunTracer> {
  if (settings.otlp_endpoint === null) return noopTracer;
  const { createOtelTracer } = await importer();
  return createOtelTracer({ ...settings, otlp_endpoint: settings.otlp_endpoint });
}
