// One Prism mock server for one spec, in this process: Prism's own HTTP server (@stoplight/prism-http-server),
// configured as `prism mock` configures it, on a loopback port the role fronts forward to.
import { createServer } from '@stoplight/prism-http-server';
import { getHttpOperationsFromSpec, resetJSONSchemaGenerator } from '@stoplight/prism-http';
import { specPath, type InterfaceName } from '../src/lib/spec-catalog.ts';
import { createPrismLogger, type PrismLogEntry, type PrismLogLevel } from './prism-log.ts';

export type PrismServerOptions = {
  interfaceName: InterfaceName;
  /** Generate bodies from the schemas instead of serving the named examples (`prism mock --dynamic`). */
  dynamic?: boolean;
  /** Dynamic mode: the same seed gives the same generated answer to the same request. */
  seed?: string;
  /** Prism's log level (default `error`). */
  logLevel?: PrismLogLevel;
  /** Each entry Prism logs at that level or above. */
  onLog?: (entry: PrismLogEntry) => void;
};

export type PrismServer = {
  interfaceName: InterfaceName;
  /** The loopback port it listens on (picked by the OS). */
  port: number;
  close(): Promise<void>;
};

// No spec sets `x-json-schema-faker`, so the generator options `prism mock` would read from the spec are
// the defaults: reset them once, as the CLI does before it starts.
let generatorReset = false;

/**
 * Starts Prism for one spec on 127.0.0.1 and an OS-chosen port; resolves once it listens. The settings are
 * those of `prism mock <spec>`: requests, responses and security checked, violations reported in the
 * `sl-violations` header (never turned into errors), CORS on.
 *
 * @example
 * const prism = await startPrismServer({ interfaceName: 'mapping' });
 * await fetch(`http://127.0.0.1:${prism.port}/api/charts`);
 * await prism.close();
 */
export async function startPrismServer(options: PrismServerOptions): Promise<PrismServer> {
  const operations = await getHttpOperationsFromSpec(specPath(options.interfaceName));
  if (!generatorReset) {
    resetJSONSchemaGenerator();
    generatorReset = true;
  }
  const logger = createPrismLogger(options.logLevel ?? 'error', (entry) => options.onLog?.(entry));
  const server = createServer(operations, {
    cors: true,
    config: {
      isProxy: false,
      validateRequest: true,
      validateResponse: true,
      checkSecurity: true,
      errors: false,
      upstreamProxy: undefined,
      mock: { dynamic: options.dynamic ?? false, ignoreExamples: false, ...(options.seed !== undefined ? { seed: options.seed } : {}) },
    },
    // Prism types its logger with its own pino (6); ours (10) has the same methods, `success` included.
    components: { logger: logger.child({ name: 'HTTP SERVER' }) as never },
  });
  // Prism's listen rejects with the bare message string; a loopback port 0 only fails when the machine is out of ports.
  const address = await server.listen(0, '127.0.0.1').catch((message: unknown) => {
    throw new Error(`Prism for ${options.interfaceName} cannot listen on a loopback port: ${String(message)}`);
  });
  return { interfaceName: options.interfaceName, port: Number(new URL(address).port), close: () => server.close() };
}
