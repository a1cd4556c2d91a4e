import { z } from 'zod';
import { expression } from './expressions.js';
import { SLUG } from './common.js';
import { HYBRID_SETTINGS, VECTOR_SETTINGS } from './vectors.js';

export const LOGIC_TYPES = [
  'user-to-item',
  'item-to-item',
  'recently-viewed',
  'items-to-items',
  'similar-products',
] as const;
export type LogicType = (typeof LOGIC_TYPES)[number];

export { SLUG } from './common.js';

const PERCENT = z.number().min(0).max(100);

/** Rotation of user-to-item (docs/guide.md, "Rotation"): a rate in 0..1 (0: off), a window in seconds. */
export const ROTATION_RATE = z.number().min(0).max(1);
export const ROTATION_TIME = z.number().positive();

export const CONSTRAINTS = z.strictObject({
  maxPerCategory: z.number().int().min(1).optional(),
  freshnessBoostDays: z.number().positive().optional(),
  injectLongTail: z.boolean().optional(),
  longTailPercentage: PERCENT.optional(),
  purchasedItemsMaxPercent: PERCENT.optional(),
});
export type Constraints = z.infer<typeof CONSTRAINTS>;

export const SCENARIO = z
  .strictObject({
    slug: SLUG,
    name: z.string().max(256).optional(),
    logicType: z.enum(LOGIC_TYPES),
    algorithm: z.string().min(1).max(128).optional(),
    filter: expression('filter').optional(),
    boosters: z.array(expression('booster')).max(100).default([]),
    constraints: CONSTRAINTS.default({}),
    vectorSettings: VECTOR_SETTINGS.optional(),
    hybridSettings: HYBRID_SETTINGS.optional(),
    rulesSlugs: z.array(SLUG).max(100).default([]),
    minItems: z.number().int().min(0).max(1000).optional(),
    maxItems: z.number().int().min(1).max(1000).optional(),
    autoRelaxConstraints: z.boolean().default(false),
    autoRelaxFilters: z.boolean().default(false),
    relaxEntireFilterOnEmpty: z.boolean().default(false),
    segmentationId: z.string().min(1).max(128).optional(),
    itemsPerSegment: z.number().int().min(1).optional(),
    autoExpandSegments: z.boolean().default(true),
    rotationRate: ROTATION_RATE.optional(),
    rotationTime: ROTATION_TIME.optional(),
  })
  .refine((s) => s.minItems === undefined || s.maxItems === undefined || s.minItems <= s.maxItems, {
    message: 'minItems must not exceed maxItems',
    path: ['minItems'],
  });
export type Scenario = z.infer<typeof SCENARIO>;

export const RULE_TYPES = ['filter', 'booster', 'constraint'] as const;

export const RULE = z
  .strictObject({
    slug: SLUG,
    name: z.string().max(256).optional(),
    type: z.enum(RULE_TYPES),
    expression: z.string().max(10_000).optional(),
    constraints: CONSTRAINTS.optional(),
    priority: z.number().int().default(0),
  })
  .superRefine((rule, context) => {
    if (rule.type === 'constraint') {
      if (!rule.constraints)
        context.addIssue({
          code: 'custom',
          message: 'a constraint rule needs constraints',
          path: ['constraints'],
        });
      return;
    }
    if (rule.expression === undefined) {
      context.addIssue({
        code: 'custom',
        message: `a ${rule.type} rule needs an expression`,
        path: ['expression'],
      });
      return;
    }
    const checked = expression(rule.type).safeParse(rule.expression);
    if (!checked.success)
      for (const issue of checked.error.issues) context.addIssue({ ...issue, path: ['expression'] } as never);
  });
export type Rule = z.infer<typeof RULE>;

export const SEGMENTATION = z
  .strictObject({
    segmentationId: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits, _, . or -'),
    name: z.string().max(256).optional(),
    type: z.enum(['property', 'auto-nextql']),
    property: z.string().min(1).max(256).optional(),
    propertyType: z.string().max(64).optional(),
    expression: expression('segmentation').optional(),
  })
  .superRefine((segmentation, context) => {
    if (segmentation.type === 'property' && !segmentation.property) {
      context.addIssue({
        code: 'custom',
        message: 'a property segmentation needs property',
        path: ['property'],
      });
    }
    if (segmentation.type === 'auto-nextql' && !segmentation.expression) {
      context.addIssue({
        code: 'custom',
        message: 'an auto-nextql segmentation needs expression',
        path: ['expression'],
      });
    }
  });
export type Segmentation = z.infer<typeof SEGMENTATION>;

/** An A/B experiment over a base scenario (CONTRACT.md, "Configuration resources"). */
export const EXPERIMENT = z
  .strictObject({
    slug: SLUG,
    name: z.string().max(256).optional(),
    baseScenario: SLUG,
    variants: z
      // A variant of weight 0 is kept but never assigned (CONTRACT.md, "Integrator features").
      .array(z.strictObject({ scenario: SLUG, weight: z.number().nonnegative().max(1_000_000) }))
      .min(1)
      .max(20),
    status: z.enum(['running', 'stopped']).default('running'),
  })
  .refine((experiment) => experiment.variants.some((v) => v.weight > 0), {
    message: 'at least one variant needs a weight above 0',
    path: ['variants'],
  })
  .refine(
    (experiment) => new Set(experiment.variants.map((v) => v.scenario)).size === experiment.variants.length,
    {
      message: 'each variant names a scenario of its own',
      path: ['variants'],
    },
  );
export type Experiment = z.infer<typeof EXPERIMENT>;
