import { Flags } from '@oclif/core';

export const dataDirFlag = Flags.string({
  description: 'where the store lives',
  env: 'NEXTREC_DATA_DIR',
  default: './data',
});

export const modelDirFlag = Flags.string({
  description: 'a local transformers model directory to embed with (default: the built-in hashing embedder)',
  env: 'NEXTREC_MODEL_DIR',
});

export const logLevelFlag = Flags.string({
  description: 'log level',
  env: 'NEXTREC_LOG_LEVEL',
  default: 'info',
  options: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
});

export const feedPrivateNetworksFlag = Flags.boolean({
  description:
    'let catalog feeds fetch from loopback and private addresses (default: public addresses only, docs/guide.md, "Catalog feeds")',
  env: 'NEXTREC_FEED_PRIVATE_NETWORKS',
});
