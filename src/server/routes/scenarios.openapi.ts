import { resource } from '../openapi/examples.js';
import type { Operations } from '../openapi/operation.js';

/**
 * What the OpenAPI document says of the routes of scenarios.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = resource(
  '/scenarios',
  'slug',
  'scenario',
  'Configuration',
  'A named placement (home page, cart) with its logic type, algorithm, filters, boosters and constraints.',
  {
    slug: 'home',
    name: 'Home page',
    logicType: 'user-to-item',
    filter: "'stock' > 0",
    boosters: [`boost by 1.5 where 'brand' = "Stridewell"`],
  },
  {
    constraints: {},
    rulesSlugs: [],
    autoRelaxConstraints: false,
    autoRelaxFilters: false,
    relaxEntireFilterOnEmpty: false,
    autoExpandSegments: true,
  },
);
