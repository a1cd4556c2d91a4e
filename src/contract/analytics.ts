import { z } from 'zod';

const DATE = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'a date is YYYY-MM-DD')
  .refine(
    (text) =>
      !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) &&
      new Date(`${text}T00:00:00Z`).toISOString().startsWith(text),
    'not a calendar date',
  );

/** Query parameters of every analytics route (CONTRACT.md, "Analytics"). */
export const ANALYTICS_QUERY = z
  .strictObject({
    from: DATE.optional(),
    to: DATE.optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(20),
  })
  .refine((query) => !query.from || !query.to || query.from <= query.to, {
    message: 'from must not be after to',
    path: ['from'],
  });
export type AnalyticsQuery = z.infer<typeof ANALYTICS_QUERY>;
