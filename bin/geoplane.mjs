#!/usr/bin/env node
// The `geoplane` command: runs the TypeScript CLI through tsx's ESM loader.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
