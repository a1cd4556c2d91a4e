import { createHash } from 'node:crypto';
import type { ModelName } from './layout.js';

export const MANIFEST_FORMAT = 1;

/** What a version's `manifest.json` says of it. */
export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  model: ModelName;
  version: number;
  tenantId: string;
  builtAt: string;
  buildMs: number;
  /** The job's parameters, as it used them. */
  parameters: Record<string, unknown>;
  /** How much of the lake the model was built from. */
  source: { interactions: number; users: number; items: number };
  /** Shapes the loader checks the files against. */
  shape: Record<string, number>;
  /** Figures of an evaluation run at build time, when there was one. */
  evaluation?: Record<string, number>;
  files: Record<string, { bytes: number; sha256: string }>;
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
