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
});
export type TenantSettingsUpdate = z.infer<typeof TENANT_SETTINGS_UPDATE>;

export interface TenantSettings {
  fieldMapper: z.infer<typeof FIELD_MAPPER>;
  dimensions: z.infer<typeof DIMENSION>[];
  freshness: z.infer<typeof FRESHNESS>;
  userProvisioningModes: (typeof USER_PROVISIONING_MODES)[number][];
}

export function defaultTenantSettings(): TenantSettings {
  return {
    fieldMapper: {},
    dimensions: [],
    freshness: { keyPath: null, type: 'date', fallbackToCreatedAt: true },
    userProvisioningModes: [],
  };
}
