// The XML bodies of interface C, built with fast-xml-parser's XMLBuilder (already the project's XML
// library; it escapes & < > " ' in text and attributes). Each function maps one body kind field by field,
// in the order of the spec's XML examples, so no unknown field of a runtime object leaks into the answer
// and the element order never depends on how an object was built.
import { XMLBuilder } from 'fast-xml-parser';
import type {
  ContentEntry,
  Diagnostic,
  DiagnosticOutput,
  DiagnosticsError,
  Snapshot,
  SnapshotCommand,
  SnapshotCommandList,
  SnapshotFile,
  SnapshotFileList,
  SnapshotIdList,
  SnapshotProcessing,
} from '../../../../generated/snapshots/types.gen.ts';

const ATTRIBUTE = '@_';
const builder = new XMLBuilder({ format: false, ignoreAttributes: false, attributeNamePrefix: ATTRIBUTE, processEntities: true });

/**
 * Characters XML 1.0 cannot carry at all, even escaped (its `Char` production): C0 controls other than
 * tab, LF and CR, lone surrogates, U+FFFE and U+FFFF. Each becomes U+FFFD, so the document stays
 * well-formed and a reader still sees that something was there.
 */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** A value as XML text: the builder escapes markup; this replaces what XML cannot hold. */
export const xmlText = (value: string | number | boolean): string => String(value).replace(NOT_XML_CHAR, '\uFFFD');

type Node = string | { [name: string]: Node | Node[] };
const build = (root: string, body: Node): string => builder.build({ [root]: body }) as string;

/**
 * `<snapshot>`: the snapshot record (getSnapshot, updateSnapshot, and the 422 of a failed snapshot).
 *
 * @example
 * snapshotXml(record); // '<snapshot><id>1180057</id><files>http://...</files>...</snapshot>'
 */
export function snapshotXml(record: Snapshot): string {
  return build('snapshot', {
    id: xmlText(record.id),
    files: xmlText(record.files),
    commands: xmlText(record.commands),
    gui_uri: xmlText(record.gui_uri),
    chassis_serial: xmlText(record.chassis_serial),
    hostname: xmlText(record.hostname),
    visible_in_gui: xmlText(record.visible_in_gui),
    description: xmlText(record.description),
    support_case: xmlText(record.support_case),
    generation_date: xmlText(record.generation_date),
    upload: {
      performed_by: { name: xmlText(record.upload.performed_by.name), email: xmlText(record.upload.performed_by.email) },
      date: xmlText(record.upload.date),
    },
    expiration_date: xmlText(record.expiration_date),
    processing_status: xmlText(record.processing_status),
    processing_messages: { message: record.processing_messages.map(xmlText) },
    file_size: xmlText(record.file_size),
    file_name: xmlText(record.file_name),
    diagnostics: xmlText(record.diagnostics),
  });
}

/** `<snapshot_ids><id>..</id>...</snapshot_ids>` (listSnapshots, deleteSnapshot, deleteAllSnapshots). */
export function snapshotIdsXml(list: SnapshotIdList): string {
  return build('snapshot_ids', { id: list.id.map(xmlText) });
}

/** `<snapshot_processing>`: the body of a 202 while a snapshot is processing. */
export function processingXml(body: SnapshotProcessing): string {
  return build('snapshot_processing', {
    id: xmlText(body.id),
    processing_status: xmlText(body.processing_status),
    message: xmlText(body.message),
  });
}

/**
 * `<diagnostic_output>` (getSnapshotDiagnostics): `diagnostics` carries `hit_count`, `filter` and
 * `miss_count` as attributes, each `diagnostic` its `name` as an attribute and `h_header` inside `results`
 * (the seed's XML form), then `system_information` and `version`.
 *
 * @example
 * diagnosticsXml(output); // '<diagnostic_output><diagnostics hit_count="1" filter="hit" miss_count="212">...'
 */
export function diagnosticsXml(output: DiagnosticOutput): string {
  const { diagnostics, system_information: system } = output;
  return build('diagnostic_output', {
    diagnostics: {
      [`${ATTRIBUTE}hit_count`]: xmlText(diagnostics.hit_count),
      [`${ATTRIBUTE}filter`]: xmlText(diagnostics.filter),
      [`${ATTRIBUTE}miss_count`]: xmlText(diagnostics.miss_count),
      diagnostic: diagnostics.diagnostic.map(diagnosticNode),
    },
    system_information: {
      hostname: xmlText(system.hostname),
      chassis_serial: xmlText(system.chassis_serial),
      platform: xmlText(system.platform),
    },
    version: xmlText(output.version),
  });
}

function diagnosticNode(diagnostic: Diagnostic): Node {
  const { run_data: run, results } = diagnostic;
  return {
    [`${ATTRIBUTE}name`]: xmlText(diagnostic.name),
    output: { line: diagnostic.output.map(xmlText) },
    run_data: { h_importance: xmlText(run.h_importance), match: xmlText(run.match) },
    results: {
      h_action: xmlText(results.h_action),
      h_name: xmlText(results.h_name),
      h_header: xmlText(results.h_header),
      h_summary: xmlText(results.h_summary),
      h_sols: { url: results.h_sols.map(xmlText) },
      h_cve_ids: { cve_id: results.h_cve_ids.map(xmlText) },
    },
  };
}

const entry = (item: ContentEntry): Node => ({ id: xmlText(item.id), value: xmlText(item.value) });

/** `<files><file><id/><value/></file>...</files>` (listSnapshotFiles). */
export function filesXml(list: SnapshotFileList): string {
  return build('files', { file: list.file.map(entry) });
}

/** `<commands><command><id/><value/></command>...</commands>` (listSnapshotCommands). */
export function commandsXml(list: SnapshotCommandList): string {
  return build('commands', { command: list.command.map(entry) });
}

/** `<file>` with its base64 `content` (getSnapshotFile). */
export function fileXml(file: SnapshotFile): string {
  return build('file', {
    id: xmlText(file.id),
    value: xmlText(file.value),
    size: xmlText(file.size),
    truncated: xmlText(file.truncated),
    content: xmlText(file.content),
  });
}

/** `<command>` with its base64 `output` (getSnapshotCommand). */
export function commandXml(command: SnapshotCommand): string {
  return build('command', { id: xmlText(command.id), value: xmlText(command.value), output: xmlText(command.output) });
}

/**
 * `<error><code/><message/></error>`: the error body of interface C.
 *
 * @example
 * errorXml({ code: 404, message: 'Snapshot 9999999 was not found.' });
 */
export function errorXml(error: DiagnosticsError): string {
  return build('error', { code: xmlText(error.code), message: xmlText(error.message) });
}
