import { resource } from '../openapi/examples.js';
import * as R from '../openapi/responses.js';
import type { Operations } from '../openapi/operation.js';

/**
 * What the OpenAPI document says of the routes of segmentations.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'POST /segmentations/validate-expression': {
    id: 'validateExpression',
    tag: 'Configuration',
    summary: 'Validate an expression',
    description:
      'Parses a nextQL expression as a filter, booster or segmentation: `{ valid }`, or where it fails.',
    body: R.VALIDATION,
    example: { expression: "'price' < 50", kind: 'filter' },
    answer: { valid: true },
  },
  'GET /segmentations/:id/segments': {
    id: 'listSegments',
    tag: 'Configuration',
    summary: 'List the segments',
    description: 'The segments of a segmentation with their item counts.',
    body: R.SEGMENTS,
    answer: {
      data: [
        { name: 'Stridewell', itemCount: 333 },
        { name: 'Pace', itemCount: 121 },
      ],
    },
  },
  ...resource(
    '/segmentations',
    'segmentationId',
    'segmentation',
    'Configuration',
    'Items grouped into segments by an expression.',
    { segmentationId: 'brands', type: 'property', property: 'attributes.brand' },
  ),
};
