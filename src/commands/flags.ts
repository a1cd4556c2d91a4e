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

export const storeFlag = Flags.string({
  description:
    'the store of record: postgres://user:password@host:port/database, which several daemons may share (default: the DuckDB file in the data dir)',
  env: 'NEXTREC_STORE_URL',
});

/** Where a command finds the store: the data dir, and PostgreSQL when `--store` names one. */
export const storeFlags = { 'data-dir': dataDirFlag, store: storeFlag };

/** Where the store is, from `storeFlags`. */
export interface StorePlace {
  dataDir: string;
  storeUrl?: string;
}

export function storePlace(flags: { 'data-dir': string; store?: string }): StorePlace {
  return { dataDir: flags['data-dir'], storeUrl: flags.store };
}
