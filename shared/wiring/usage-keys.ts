import type { UsageKeyProvisioner } from '../domain/usage-keys.ts';
import { usageKeys as provisioner } from '../platform/usage-keys.ts';

/** The usage-key provisioner of this deployment (API Gateway usage plans; a no-op locally). */
export function usageKeys(): UsageKeyProvisioner {
  return provisioner();
}
