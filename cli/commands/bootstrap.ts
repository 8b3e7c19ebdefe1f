import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Command } from 'commander';
import { CliError, UsageError } from '../config.ts';
import { line, writeErr, writeOut } from '../terminal.ts';
import { action, printJson } from './common.ts';

interface BootstrapOptions {
  stack?: string;
  region?: string;
  name: string;
  table?: string;
  endpoint?: string;
  revoke?: string;
  json?: boolean;
}

/** The stack output that names the catalog table (infra/stacks/geoplane-stack.ts). */
const TABLE_OUTPUT = 'TableName';

/** The region from --region, else the SDK's own resolution (AWS_REGION, the profile's region). */
async function regionOf(option: string | undefined): Promise<string> {
  if (option) return option;
  try {
    return await new DynamoDBClient({}).config.region();
  } catch {
    throw new UsageError('no AWS region: pass --region, set AWS_REGION or give your profile a region');
  }
}

/** Refuses early, with a clear message, when the SDK finds no credentials. */
async function requireCredentials(region: string): Promise<void> {
  try {
    await new DynamoDBClient({ region }).config.credentials();
  } catch {
    throw new UsageError(
      'no AWS credentials: bootstrap writes to the stack’s table with your own AWS credentials. ' +
        'Set AWS_PROFILE (aws sso login / aws configure) or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY.',
    );
  }
}

/** The table named by the stack's TableName output. */
async function tableOfStack(stack: string, region: string): Promise<string> {
  const cloudFormation = new CloudFormationClient({ region });
  let outputs: { OutputKey?: string; OutputValue?: string }[] | undefined;
  try {
    const answer = await cloudFormation.send(new DescribeStacksCommand({ StackName: stack }));
    outputs = answer.Stacks?.[0]?.Outputs;
  } catch (error) {
    throw new CliError(`cannot read stack '${stack}' in ${region}: ${(error as Error).message}`);
  }
  const table = outputs?.find((o) => o.OutputKey === TABLE_OUTPUT)?.OutputValue;
  if (!table)
    throw new CliError(`stack '${stack}' in ${region} has no ${TABLE_OUTPUT} output: is it GeoPlane?`);
  return table;
}

/**
 * `geoplane bootstrap --stack <name>` (ADR 0089): creates a global super_admin API key directly in
 * a deployed stack's table, with the operator's AWS credentials, and prints it once (only its
 * hash is stored). The way in when no administrator exists yet.
 */
export function registerBootstrap(program: Command): void {
  program
    .command('bootstrap')
    .description(
      'Create a one-time global super_admin API key in a deployed stack, with your AWS credentials, ' +
        'and print it once (only its hash is stored). For the first administrator.',
    )
    .option('--stack <name>', 'the GeoPlane CloudFormation stack (its TableName output names the table)')
    .option('--region <region>', 'AWS region of the stack (else AWS_REGION or the profile’s region)')
    .option('--name <name>', 'name of the key', 'bootstrap')
    .option('--table <name>', 'the table itself, instead of reading it from --stack')
    .option('--endpoint <url>', 'DynamoDB endpoint (DynamoDB Local; tests)')
    .option(
      '--revoke <key id>',
      'revoke a global API key instead (the API revokes only workspace keys): a lost or retired bootstrap key',
    )
    .option(
      '--json',
      'print the key (or the revoked key) as JSON on stdout: id, name, role_id, key / revoked',
    )
    .action(
      action(async (options: BootstrapOptions) => {
        if (!options.stack && !options.table) throw new UsageError('name the stack: --stack <name>');
        const region = await regionOf(options.region);
        await requireCredentials(region);
        const table = options.table ?? (await tableOfStack(options.stack as string, region));

        // The store reads its table, region and endpoint from the environment, once, on first use.
        process.env.TABLE_NAME = table;
        process.env.AWS_REGION = region;
        if (options.endpoint) process.env.DYNAMODB_ENDPOINT = options.endpoint;
        else delete process.env.DYNAMODB_ENDPOINT;
        const { createApiKey, revokeApiKey } = await import('#domain/api-keys.ts');
        const { apiKeyRepository } = await import('#wiring/repositories.ts');

        if (options.revoke !== undefined) {
          // Global keys live outside every workspace: find(undefined, id) reads only those.
          const id = options.revoke.trim().toLowerCase();
          const found = /^[0-9a-f-]{36}$/.test(id) ? await apiKeyRepository().find(undefined, id) : undefined;
          if (!found) throw new CliError(`no global API key with id '${options.revoke}' in table ${table}`);
          const already = found.revoked;
          await revokeApiKey({ keys: apiKeyRepository() }, { workspaceId: undefined, keyId: found.id });
          if (options.json) {
            printJson({
              id: found.id,
              name: found.name,
              role_id: found.role_id,
              revoked: true,
              already_revoked: already,
            });
            return 0;
          }
          writeErr(
            already
              ? line`The global API key '${found.name}' (id ${found.id}) was already revoked.\n`
              : line`Revoked the global ${found.role_id} API key '${found.name}' (id ${found.id}) in table ${table}: it is refused from now on.\n`,
          );
          return 0;
        }

        const { key, secret } = await createApiKey(
          { keys: apiKeyRepository() },
          {
            workspaceId: undefined,
            body: {
              name: options.name,
              role_id: 'super_admin',
              owner_name: 'geoplane bootstrap',
            },
          },
        );
        if (options.json) {
          writeErr('Store the key now: it is shown only this once and cannot be recovered.\n');
          printJson({ id: key.id, name: key.name, role_id: key.role_id, key: secret });
          return 0;
        }
        writeErr(
          line`Created the global super_admin API key '${key.name}' (id ${key.id}) in table ${table}.\n` +
            'Store it now in a password manager: it is shown only this once and cannot be recovered\n' +
            '(only its hash is stored). Send it as the X-API-Key header; once claim mappings give your\n' +
            'administrators super_admin, keep it offline for emergencies.\n',
        );
        writeOut(`${secret}\n`);
        return 0;
      }),
    );
}
