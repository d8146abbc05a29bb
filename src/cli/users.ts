/**
 * `spoof-checker users`: the console's accounts on the service's data, while it runs or not.
 *   users add --org ORG --email EMAIL --role ROLE [--public-origin URL] [--data DIR | --database URL]
 *   users list [--data DIR | --database URL] [--json]
 *   users remove --email EMAIL [--org ORG] [--data DIR | --database URL]
 *
 * `add` prints a one-time invitation link (valid 72 hours) that sets the password; the same
 * functions as the console's own invitations (src/console/accounts.ts).
 */
import { invite, listInvitations, listUsers, removeUser, INVITATION_TTL_MS, type InvitationListing, type UserListing } from '../console/accounts.js';
import { CONSOLE_ROLES } from '../store/console.js';
import type { StorageChoice } from '../store/open.js';
import { booleanOptions, parseCommandArgs, stringOptions, UsageError } from './args.js';
import { EXIT_FAILED, EXIT_OK, type CliIo, type Command } from './io.js';
import { runSubcommand, withStores } from './subcommands.js';
import { reportStorage } from './reports.js';

/** The variable that gives the public origin when --public-origin does not (serve reads it too). */
export const PUBLIC_ORIGIN_ENV = 'SPOOF_CHECKER_PUBLIC_ORIGIN';

const USAGE = `Usage: spoof-checker users add --org ORG --email EMAIL --role ROLE [options]
       spoof-checker users list [--json] [options]
       spoof-checker users remove --email EMAIL [--org ORG] [options]

People who sign in to the console (/console). Works on the service's data, while it runs or not.

  add                  invite EMAIL to the organisation ORG as ROLE (${CONSOLE_ROLES.join(', ')}): prints a
                       one-time link, valid ${INVITATION_TTL_MS / 3_600_000} hours, that sets the password. ORG is an
                       organisation the service knows (its keys, its seed) or a new one.
    --public-origin URL  the service's public address (https://console.example): the link starts with it
                       [${PUBLIC_ORIGIN_ENV}]; without it the path alone is printed
  list                 every user, their organisations and roles, then open invitations (marked)
    --json             one JSON document
  remove               remove EMAIL from ORG (without --org: from every organisation, and the account);
                       never the last owner of an organisation

  --data DIR           SQLite in DIR (default ./data) [SPOOF_CHECKER_DATA]
  --database URL       PostgreSQL: postgresql://user:pw@host/db [DATABASE_URL]
  -h, --help           this text

Exit status: 0 done, 1 refused (unknown user, last owner, bad email) or the store failed, 2 on a usage error.
`;

const OPTIONS = { ...stringOptions('data', 'database', 'org', 'email', 'role', 'public-origin'), ...booleanOptions('json') };

/** An http(s) origin, or a usage error that says what is wrong. */
export function publicOriginOption(text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--public-origin / ${PUBLIC_ORIGIN_ENV} must be an http(s) URL such as https://console.example, not "${text}"`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || (url.pathname !== '/' && url.pathname !== '')) {
    throw new UsageError(`--public-origin / ${PUBLIC_ORIGIN_ENV} must be an origin (scheme, host and port only) such as https://console.example, not "${text}"`);
  }
  return url.origin;
}

function organizationOf(org: string | undefined): string {
  if (org === undefined) throw new UsageError('name the organisation with --org ORG');
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(org)) throw new UsageError(`--org must be an organisation id (letters, digits, . _ : -), not "${org}"`);
  return org;
}

/** `spoof-checker users`. */
export const users: Command = async (args, io) =>
  runSubcommand('users', USAGE, args, io, async (sub, rest) => {
    const { values, positionals } = parseCommandArgs(rest, OPTIONS, false);
    if (values.help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    void positionals;
    const storage = reportStorage(values.data, values.database, io.env);
    if (sub === 'add') return await add(values, storage, io);
    if (sub === 'list') return await list(values, storage, io);
    if (sub === 'remove') return await remove(values, storage, io);
    throw new UsageError(`unknown subcommand '${sub}': use add, list or remove`);
  });

type Values = { org?: string | undefined; email?: string | undefined; role?: string | undefined; 'public-origin'?: string | undefined; json?: boolean | undefined };

async function add(values: Values, storage: StorageChoice, io: CliIo): Promise<number> {
  const organizationId = organizationOf(values.org);
  if (values.email === undefined) throw new UsageError('give the person\'s address with --email EMAIL');
  if (values.role === undefined) throw new UsageError(`give the role with --role (${CONSOLE_ROLES.join(', ')})`);
  const origin = publicOriginOption(values['public-origin'] ?? (io.env[PUBLIC_ORIGIN_ENV] || undefined));
  return withStores(storage, async (stores) => {
    if (!(await stores.apiKeys.getOrganization(organizationId))) await stores.apiKeys.addOrganization({ id: organizationId, name: organizationId });
    const outcome = await invite(stores.console, { organizationId, email: values.email!, role: values.role!, invitedBy: 'cli', now: new Date() });
    if (outcome.kind === 'invalid') {
      io.err(`spoof-checker users: ${outcome.message}\n`);
      return EXIT_FAILED;
    }
    io.out(`${origin ?? ''}${outcome.path}\n`);
    io.err(
      `Invitation for ${outcome.invitation.email} as ${outcome.invitation.role} of ${organizationId}, valid until ${outcome.invitation.expiresAt} (once).\n` +
        (origin ? '' : `Open it on the service's address (for example http://127.0.0.1:8080${outcome.path}); give --public-origin or ${PUBLIC_ORIGIN_ENV} to print the whole link.\n`),
    );
    return EXIT_OK;
  });
}

async function list(values: Values, storage: StorageChoice, io: CliIo): Promise<number> {
  return withStores(storage, async (stores) => {
    // The open invitations too, after the users, each marked (its link is not shown again: `users add` makes a new one).
    const all: (UserListing | InvitationListing)[] = [...(await listUsers(stores.console)), ...(await listInvitations(stores.console, new Date()))];
    if (values.json) {
      io.out(`${JSON.stringify(all, null, 2)}\n`);
      return EXIT_OK;
    }
    if (all.length === 0) io.err('No user yet: add one with spoof-checker users add --org ORG --email EMAIL --role owner\n');
    for (const user of all) {
      const orgs = user.memberships.map((m) => `${m.organizationId}:${m.role}`).join(', ') || '(no organisation)';
      const state = 'invitation' in user ? `invitation open until ${user.invitation.expiresAt}` : user.active ? 'active' : 'invited';
      io.out(`${user.email}\t${state}\t${user.totp ? 'totp' : '-'}\t${orgs}\n`);
    }
    return EXIT_OK;
  });
}

async function remove(values: Values, storage: StorageChoice, io: CliIo): Promise<number> {
  if (values.email === undefined) throw new UsageError('give the person\'s address with --email EMAIL');
  const organizationId = values.org === undefined ? undefined : organizationOf(values.org);
  return withStores(storage, async (stores) => {
    const outcome = await removeUser(stores.console, values.email!, organizationId);
    if (outcome === 'not-found') {
      io.err(`spoof-checker users: no user ${values.email}${organizationId ? ` in ${organizationId}` : ''}\n`);
      return EXIT_FAILED;
    }
    if (outcome !== 'removed') {
      io.err(`spoof-checker users: ${values.email} is the last owner of ${outcome.organizationId}: make someone else owner first\n`);
      return EXIT_FAILED;
    }
    io.err(`Removed ${values.email}${organizationId ? ` from ${organizationId}` : ' and the account'}; their sessions there are ended.\n`);
    return EXIT_OK;
  });
}
