// `keel wasm list|put|rm`: a tenant's WebAssembly tools over the HTTP API
// (docs/wasm-tools.md). `put` reads the module file and sends it as base64, or names a
// module the tenant already stored as an artifact (`--artifact`, for modules over the
// body limit).

import { readFile } from 'node:fs/promises';
import { parseCommand } from './args.ts';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { everyItem } from './every-page.ts';
import { UsageError } from './errors.ts';
import { connect } from './keel.ts';

export const WASM_USAGE = `keel wasm [list | rm <name> | put <name> (--module FILE.wasm | --artifact PATH) --effect read_only|idempotent|effectful --description TEXT [--schema FILE.json] [--timeout-ms N] [--memory-mb N] [--max-output-bytes N]] ${CLIENT_USAGE}`;

type Print = (text: string) => void;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

function numberOf(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number))
    throw new UsageError(`${flag}: expected an integer, got "${value}"`);
  return number;
}

export async function wasmCommand(
  argv: string[],
  print: Print = (line) => process.stdout.write(line),
): Promise<number> {
  const { values, positionals } = parseCommand(argv, {
    ...CLIENT_OPTIONS,
    module: { type: 'string' },
    effect: { type: 'string' },
    description: { type: 'string' },
    schema: { type: 'string' },
    'timeout-ms': { type: 'string' },
    'memory-mb': { type: 'string' },
    'max-output-bytes': { type: 'string' },
    artifact: { type: 'string' },
  });
  const [action = 'list', name] = positionals;
  const { keel, tenant } = connect(loadClientConfig(values));
  const toolName = (): string => {
    if (!name) throw new UsageError(`wasm ${action} needs a tool name`);
    return name;
  };
  switch (action) {
    case 'list': {
      const tools = await everyItem(
        (cursor) => keel.wasmTools.list(tenant, cursor ? { cursor } : {}),
        'tools',
      );
      for (const tool of tools as Loose[]) {
        print(
          `${tool.tool}\t${tool.effect}\t${tool.module_bytes} bytes\t${tool.timeout_ms} ms\t${tool.memory_limit_mb} MiB\t${tool.description}\n`,
        );
      }
      return 0;
    }
    case 'put': {
      const toolAt = toolName();
      if ((values.module === undefined) === (values.artifact === undefined)) {
        throw new UsageError(
          'wasm put: give exactly one of --module FILE.wasm and --artifact PATH',
        );
      }
      if (!values.effect) throw new UsageError('wasm put: --effect is required');
      if (!values.description) throw new UsageError('wasm put: --description is required');
      const module = values.module
        ? { module_base64: (await readFile(values.module)).toString('base64') }
        : { module_artifact: values.artifact as string };
      const body = {
        description: values.description,
        effect: values.effect,
        ...(values.schema && {
          input_schema: JSON.parse(await readFile(values.schema, 'utf8')) as unknown,
        }),
        ...(values['timeout-ms'] && { timeout_ms: numberOf('--timeout-ms', values['timeout-ms']) }),
        ...(values['memory-mb'] && {
          memory_limit_mb: numberOf('--memory-mb', values['memory-mb']),
        }),
        ...(values['max-output-bytes'] && {
          max_output_bytes: numberOf('--max-output-bytes', values['max-output-bytes']),
        }),
        ...module,
      };
      const tool: Loose = await keel.wasmTools.put(tenant, toolAt, body as Loose);
      print(`wasm tool ${tool.tool} saved (${tool.module_bytes} bytes, sha256 ${tool.sha256})\n`);
      return 0;
    }
    case 'rm':
      await keel.wasmTools.delete(tenant, toolName());
      print(`wasm tool ${name} removed\n`);
      return 0;
    default:
      throw new UsageError(`wasm: expected list, put or rm, got "${action}"`);
  }
}
