import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ProvisioningError, type ProvisioningErrorCode } from './errors.ts';

/** Requests per window; what a consumer's rate-limiting plugin is configured with. */
export interface Limits {
  minute: number;
  day: number;
}

export const PLAN_NAMES = ['free', 'pro', 'business', 'enterprise'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export interface Catalogue {
  plans: Record<PlanName, Limits | { custom: true }>;
  anonymous: Limits;
}

const PLANS_FILE = new URL('../../gateway/plans.yaml', import.meta.url);

function limits(value: unknown, where: string, code: ProvisioningErrorCode = 'catalogue-invalid'): Limits {
  const { minute, day } = (value ?? {}) as Record<string, unknown>;
  if (typeof minute !== 'number' || typeof day !== 'number' || !Number.isInteger(minute) || !Number.isInteger(day) || minute < 1 || day < minute) {
    throw new ProvisioningError(code, `${where}: needs integer minute >= 1 and day >= minute`);
  }
  return { minute, day };
}

/** gateway/plans.yaml: the one catalogue of plans (scripts, docs and tests read it). */
export function loadCatalogue(file: URL | string = PLANS_FILE): Catalogue {
  const document = parse(readFileSync(file, 'utf8')) as { plans?: Record<string, unknown>; anonymous?: unknown };
  const plans = {} as Catalogue['plans'];
  for (const name of PLAN_NAMES) {
    const entry = document.plans?.[name] as Record<string, unknown> | undefined;
    if (!entry) throw new ProvisioningError('catalogue-invalid', `plans.yaml: plan '${name}' is missing`);
    plans[name] = entry.custom === true ? { custom: true } : limits(entry, `plans.yaml: ${name}`);
  }
  return { plans, anonymous: limits(document.anonymous, 'plans.yaml: anonymous') };
}

/** The limits of a plan; enterprise needs them given explicitly. */
export function limitsFor(catalogue: Catalogue, plan: PlanName, custom?: Partial<Limits>): Limits {
  const entry = catalogue.plans[plan];
  if ('custom' in entry) {
    if (custom?.minute === undefined || custom.day === undefined) {
      throw new ProvisioningError('plan-limits', `plan ${plan} has custom limits: give it a minute and a day limit`);
    }
    if (custom.minute < 1 || custom.day < custom.minute) {
      throw new ProvisioningError('plan-limits', `plan ${plan} needs a minute limit of at least 1 and a day limit of at least the minute's, got ${custom.minute}/minute and ${custom.day}/day`);
    }
    return limits(custom, `${plan} limits`, 'plan-limits');
  }
  if (custom?.minute !== undefined || custom?.day !== undefined) {
    throw new ProvisioningError('plan-limits', `plan ${plan} has fixed limits (${entry.minute}/minute, ${entry.day}/day); custom limits are for enterprise`);
  }
  return entry;
}
