import type * as F from '../../../generated/device-config/types.gen.ts';
import { fail, ok, type Result } from '../../lib/errors.ts';
import type { Database } from '../../stores/database.ts';
import type { SchemaAt } from './declaration/declaration-check.ts';
import { isRecord } from './declaration/model.ts';
import { schemaProblems } from './declaration/schema-messages.ts';
import { invalidRequest } from './appsvcs-outcome.ts';
import { type CodedError, codedError } from './device-errors.ts';

export type DeploySettings = F.DeploySettings;

/** The real extension's defaults (its current release: per-application deployment allowed). */
export const SETTINGS_DEFAULTS: Readonly<DeploySettings> = Object.freeze({
  asyncTaskStorage: 'data-group',
  burstHandlingEnabled: false,
  perAppDeploymentAllowed: true,
  performanceTracingEnabled: false,
  performanceTracingEndpoint: '',
  serviceDiscoveryEnabled: true,
  serializeFileUploads: false,
  webhook: '',
});

const KEYS = Object.keys(SETTINGS_DEFAULTS) as (keyof DeploySettings)[];

/** The settings as saved, in the store every device process shares (only those changed are rows). */
export type SettingsStore = {
  read(): Promise<DeploySettings>;
  /** Saves the given settings together and answers all of them as now saved. */
  save(changes: Partial<DeploySettings>): Promise<DeploySettings>;
};

export function createSqlSettingsStore(db: Database): SettingsStore {
  const read = async (): Promise<DeploySettings> => {
    const settings: Record<string, unknown> = { ...SETTINGS_DEFAULTS };
    for (const row of await db.query('SELECT name, value FROM device_appsvcs_settings')) {
      const name = String(row.name);
      // A row this code does not know (written by newer code) is not answered.
      if (Object.hasOwn(SETTINGS_DEFAULTS, name)) settings[name] = JSON.parse(String(row.value));
    }
    return settings as DeploySettings;
  };
  return {
    read,
    async save(changes) {
      await db.transaction(async (tx) => {
        for (const [name, value] of Object.entries(changes)) {
          await tx.execute(
            'INSERT INTO device_appsvcs_settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
            [name, JSON.stringify(value)],
          );
        }
      });
      return read();
    },
  };
}

export type SettingsError = CodedError<'declarationInvalid'>;

/**
 * The changes a `POST /settings` body asks for: checked against `DeploySettingsUpdate` (422 `declaration
 * is invalid`, one pointer per problem, as the real extension answers), `betaOptions.perAppDeploymentAllowed`
 * (older releases' name) read as `perAppDeploymentAllowed`, and `performanceTracingEnabled: true` refused
 * as the real extension refuses it without its tracing client (which this device never has).
 */
export function settingsChanges(body: unknown, schemaAt: SchemaAt): Result<Partial<DeploySettings>, SettingsError> {
  const validate = schemaAt('/components/schemas/DeploySettingsUpdate');
  if (!validate(body)) {
    const errors = schemaProblems(validate.errors ?? []).map((p) => `${p.instancePath}: ${p.message}`);
    return fail(invalidRequest(errors.slice(0, 100)) as SettingsError);
  }
  const update = body as F.DeploySettingsUpdate;
  if (update.performanceTracingEnabled === true)
    return fail(codedError('declarationInvalid', 'Performance tracing cannot be enabled unless the jaeger client is installed'));
  const changes: Record<string, unknown> = {};
  const beta = isRecord(update.betaOptions) ? update.betaOptions.perAppDeploymentAllowed : undefined;
  if (beta !== undefined) changes.perAppDeploymentAllowed = beta;
  for (const key of KEYS) if (update[key] !== undefined) changes[key] = update[key];
  return ok(changes as Partial<DeploySettings>);
}
