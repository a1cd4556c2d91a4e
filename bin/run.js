#!/usr/bin/env -S node --concurrent-marking-max-worker-num=1
import { execute } from '@oclif/core';

await execute({ dir: import.meta.url });
