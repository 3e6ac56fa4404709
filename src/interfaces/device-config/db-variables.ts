/**
 * The system database variables the device serves (seed Resources H, transport diagnostic settings):
 * their defaults and ranges. The order of a range is the order the device lists it in.
 */
export const DB_VARIABLES = {
  'dataplane.quic.log.level': { defaultValue: 'Critical', range: ['Critical', 'Error', 'Warning', 'Notice', 'Info', 'Debug'] },
  'quic.qlogging': { defaultValue: 'disable', range: ['enable', 'disable'] },
  'log.access.level': {
    defaultValue: 'notice',
    range: ['emergency', 'alert', 'critical', 'error', 'warning', 'notice', 'informational', 'debug'],
  },
} as const;

export type DbVariableName = keyof typeof DB_VARIABLES;

export type DbValues = { readonly [K in DbVariableName]: (typeof DB_VARIABLES)[K]['range'][number] };

export const isDbVariable = (name: string): name is DbVariableName => Object.hasOwn(DB_VARIABLES, name);

/** Whether `value` is in the variable's range (exactly: the device's values are case-sensitive). */
export const inRange = (name: DbVariableName, value: string): boolean => (DB_VARIABLES[name].range as readonly string[]).includes(value);

/** The real product's message for a value outside the range: it names the range, and (unlike the real one) not the value sent. */
export const outOfRangeMessage = (name: DbVariableName) =>
  `01070911:3: The requested value is invalid (${DB_VARIABLES[name].range.join(' | ')}) for db variable (${name}).`;

/** Access logging of the deployed services is on at `informational` and `debug`. */
export const accessLoggingOn = (level: string) => level === 'debug' || level === 'informational';

export const defaultDbValues = (): DbValues => ({
  'dataplane.quic.log.level': DB_VARIABLES['dataplane.quic.log.level'].defaultValue,
  'quic.qlogging': DB_VARIABLES['quic.qlogging'].defaultValue,
  'log.access.level': DB_VARIABLES['log.access.level'].defaultValue,
});
