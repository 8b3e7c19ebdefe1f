import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { GLOBAL_ROLE_CLAIM, ROLES_CLAIM } from '#auth/authenticate.ts';
import { localIssuer } from './files.ts';

/** `npm run token -- --role super_admin` or `--workspace W --role admin|editor|viewer`: a local JWT. */
const { values } = parseArgs({
  options: {
    role: { type: 'string' },
    workspace: { type: 'string' },
    subject: { type: 'string', default: 'local-user' },
    ttl: { type: 'string', default: '3600' },
  },
});
const roles = ['super_admin', 'admin', 'editor', 'viewer'];
if (!values.role || !roles.includes(values.role) || (values.role !== 'super_admin' && !values.workspace)) {
  console.error(
    'usage: npm run token -- --role super_admin | --workspace <id|name> --role admin|editor|viewer',
  );
  process.exit(2);
}
const issuer = await localIssuer(resolve(process.env.GEOPLANE_DATA_DIR ?? '.local'));
const claims =
  values.role === 'super_admin'
    ? { [GLOBAL_ROLE_CLAIM]: 'super_admin' }
    : { [ROLES_CLAIM]: { [values.workspace as string]: values.role } };
console.log(await issuer.sign(claims, values.subject as string, Number(values.ttl)));
