import { z } from 'zod';

const PATH = z.string().min(1).max(256);

export const FIELD_MAPPER = z.strictObject({
  externalIdPath: PATH.optional(),
  namePath: PATH.optional(),
  categoryPath: PATH.optional(),
  coverImagePath: PATH.optional(),
  basePricePath: PATH.optional(),
  taxonomyPath: PATH.optional(),
});

export const DIMENSION = z.strictObject({
  key: z.string().min(1).max(128),
  type: z.enum(['enum', 'string', 'number', 'boolean', 'date']),
  label: z.string().max(256).optional(),
  facetable: z.boolean().default(false),
  filterable: z.boolean().default(false),
  boostable: z.boolean().default(false),
  source: z.enum(['manual', 'feed']).default('manual'),
});

export const FRESHNESS = z.strictObject({
  keyPath: PATH.nullable().default(null),
  type: z.enum(['date']).default('date'),
  fallbackToCreatedAt: z.boolean().default(true),
});

/**
 * The weight an interaction of each type gets when it carries none (docs/guide.md, "Tenant settings"):
 * in histories and in models.
 */
export const DEFAULT_WEIGHTS = { view: 1, cart: 2, purchase: 4, rating: 3, bookmark: 2 } as const;

const TYPE_WEIGHT = z.number().finite().min(0);

/** The types sent replace the field; the types left out take their default weights. */
export const INTERACTION_WEIGHTS = z.strictObject({
  view: TYPE_WEIGHT.optional(),
  cart: TYPE_WEIGHT.optional(),
  purchase: TYPE_WEIGHT.optional(),
  rating: TYPE_WEIGHT.optional(),
  bookmark: TYPE_WEIGHT.optional(),
});
export type InteractionWeights = Record<keyof typeof DEFAULT_WEIGHTS, number>;

export const USER_PROVISIONING_MODES = ['on_identity_merge', 'on_first_known_interaction'] as const;

export const TENANT_SETTINGS_UPDATE = z.strictObject({
  fieldMapper: FIELD_MAPPER.optional(),
  dimensions: z
    .array(DIMENSION)
    .max(500)
    .refine((dims) => new Set(dims.map((d) => d.key)).size === dims.length, 'dimension keys must be unique')
    .optional(),
  freshness: FRESHNESS.optional(),
  userProvisioningModes: z
    .array(z.enum(USER_PROVISIONING_MODES))
    .refine((modes) => new Set(modes).size === modes.length, 'modes must be unique')
    .optional(),
  interactionWeights: INTERACTION_WEIGHTS.optional(),
});
export type TenantSettingsUpdate = z.infer<typeof TENANT_SETTINGS_UPDATE>;

export interface TenantSettings {
  fieldMapper: z.infer<typeof FIELD_MAPPER>;
  dimensions: z.infer<typeof DIMENSION>[];
  freshness: z.infer<typeof FRESHNESS>;
  userProvisioningModes: (typeof USER_PROVISIONING_MODES)[number][];
  interactionWeights: InteractionWeights;
}

/** Every type's weight: those sent, the defaults for the others. */
export function interactionWeightsOf(
  sent: z.infer<typeof INTERACTION_WEIGHTS> | undefined,
): InteractionWeights {
  return { ...DEFAULT_WEIGHTS, ...sent };
}

export function defaultTenantSettings(): TenantSettings {
  return {
    fieldMapper: {},
    dimensions: [],
    freshness: { keyPath: null, type: 'date', fallbackToCreatedAt: true },
    userProvisioningModes: [],
    interactionWeights: interactionWeightsOf(undefined),
  };
}
