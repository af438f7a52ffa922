// The start-up check of provider keys (docs/providers.md, "A missing key"): a provider
// whose `api_key_env` names a variable that was unset or empty when the config was read
// would only fail later, as a 401 inside some run, so the processes that would call it
// refuse to start. Kept apart from configured.ts so a CLI command can check without
// loading the provider stack.

import { KeelError } from '../errors.ts';
import type { ProviderSpec } from './configured.ts';

/** CONFIG_INVALID naming each of `names` whose key is missing; no api_key_env: none. */
export function assertProviderKeys(
  specs: Readonly<Record<string, ProviderSpec>>,
  keys: Readonly<Record<string, string | undefined>>,
  names: readonly string[],
): void {
  const missing = names.flatMap((name) => {
    const variable = Object.hasOwn(specs, name) ? specs[name]?.api_key_env : undefined;
    return variable && !keys[name]
      ? [`providers.${name}.api_key_env: ${variable} is not set or is empty`]
      : [];
  });
  if (missing.length > 0) {
    throw new KeelError(
      'CONFIG_INVALID',
      `${missing.join('; ')} (set it in keel's environment, or remove api_key_env for a server that takes no key)`,
    );
  }
}
