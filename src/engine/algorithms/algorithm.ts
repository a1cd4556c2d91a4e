/** The contract every algorithm keeps; it lives beside the pipeline context it ranks from. */
export type { Algorithm } from '../context.js';
