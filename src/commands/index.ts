import Evaluate from './evaluate.js';
import Serve from './serve.js';
import TenantCreate from './tenant/create.js';
import TenantList from './tenant/list.js';
import TenantRotate from './tenant/rotate.js';

export const COMMANDS = {
  evaluate: Evaluate,
  serve: Serve,
  'tenant:create': TenantCreate,
  'tenant:list': TenantList,
  'tenant:rotate': TenantRotate,
};
