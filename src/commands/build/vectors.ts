import { Command, Flags } from '@oclif/core';
import { modelDirFlag } from '../flags.js';
import { buildFlags, runBuilds } from './run-builds.js';

export default class BuildVectors extends Command {
  static override description =
    "Embed each tenant's items (its embedding templates) and build its vector index from its lake";
  static override examples = [
    '<%= config.bin %> build vectors --tenant acme --data-dir ./data',
    '<%= config.bin %> build vectors --model-dir ./models/all-MiniLM-L6-v2',
  ];
  static override flags = {
    ...buildFlags,
    'model-dir': modelDirFlag,
    'exact-limit': Flags.integer({
      description: 'up to this many items, search is exact; above, HNSW indexes are built (default 20000)',
      env: 'NEXTREC_VECTOR_EXACT_LIMIT',
      min: 0,
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(BuildVectors);
    const parameters = {
      modelDir: flags['model-dir'] ?? null,
      ...(flags['exact-limit'] !== undefined && { exactLimit: flags['exact-limit'] }),
    };
    await runBuilds(this, flags, ['vectors'], { vectors: parameters });
  }
}
