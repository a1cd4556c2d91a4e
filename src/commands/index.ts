import BuildAll from './build/all.js';
import BuildCooccurrence from './build/cooccurrence.js';
import BuildEase from './build/ease.js';
import BuildFactors from './build/factors.js';
import BuildVectors from './build/vectors.js';
import EmbeddingsServe from './embeddings/serve.js';
import Evaluate from './evaluate.js';
import FeedSync from './feed/sync.js';
import LakeExport from './lake/export.js';
import Serve from './serve.js';
import TenantCreate from './tenant/create.js';
import TenantList from './tenant/list.js';
import TenantRateLimits from './tenant/rate-limits.js';
import TenantRotate from './tenant/rotate.js';
import TokenIssue from './token/issue.js';

export const COMMANDS = {
  'build:all': BuildAll,
  'build:cooccurrence': BuildCooccurrence,
  'build:ease': BuildEase,
  'build:factors': BuildFactors,
  'build:vectors': BuildVectors,
  'embeddings:serve': EmbeddingsServe,
  evaluate: Evaluate,
  'feed:sync': FeedSync,
  'lake:export': LakeExport,
  serve: Serve,
  'tenant:create': TenantCreate,
  'tenant:list': TenantList,
  'tenant:rate-limits': TenantRateLimits,
  'tenant:rotate': TenantRotate,
  'token:issue': TokenIssue,
};
