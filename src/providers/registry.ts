// Resolves `provider/model` to a provider. `fixture` is always present; providers
// declared in keel.toml are built by configured.ts in the composition root and passed
// in, so a model naming anything else resolves to null and the run fails with
// MODEL_NOT_FOUND.

import type { Provider, ProviderRegistry } from './provider.ts';
import { createFixtureProvider } from './fixture.ts';

export function createProviderRegistry(providers: Record<string, Provider> = {}): ProviderRegistry {
  const byName = new Map<string, Provider>(Object.entries(providers));
  if (!byName.has('fixture')) byName.set('fixture', createFixtureProvider());
  return {
    resolve(modelRef: string) {
      const slash = modelRef.indexOf('/');
      if (slash <= 0 || slash === modelRef.length - 1) return null;
      const provider = byName.get(modelRef.slice(0, slash));
      return provider ? { provider, model: modelRef.slice(slash + 1) } : null;
    },
  };
}
