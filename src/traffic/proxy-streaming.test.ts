// Bodies stream through the proxy both ways, proven by a check that a buffering proxy fails (and does
// fail, in the second test): each side waits for the other to see the first part of a body before it
// sends the rest, which only a proxy that passes parts on as they come can satisfy.
import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { TapTest } from '../lib/tap-test.ts';
import { startBufferingProxy } from './fixtures/buffering-proxy.ts';
import { startHttpMember, startProxiedGateway as gatewayFor } from './test-servers.ts';

const MB = 1024 * 1024;
/** The first part of each body in the streaming check, sent before the other side has seen anything. */
const FIRST_PART = 64 * 1024;

/** Resolves true once `event` has happened, false if `ms` pass first. */
function happensWithin(event: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const giveUp = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false)));
  return Promise.race([event.then(() => true), giveUp]).finally(() => clearTimeout(timer));
}

/**
 * A member for the streaming check. `/upload` tells when the first bytes of the body reach it and
 * answers the size and hash of the whole; `/download` sends a first part, then the rest only once the
 * client says it holds that part. A proxy that holds bodies whole never lets a first part through, so
 * each side gives up waiting after `patienceMs` (this only keeps a broken proxy from hanging the test)
 * and the check reports that the body was not streamed.
 */
async function startStreamingMember(t: TapTest, patienceMs: number) {
  const download = randomBytes(8 * MB);
  let uploadArrives: () => void = () => {};
  const firstUploadBytes = new Promise<void>((resolve) => (uploadArrives = resolve));
  let clientHoldsFirstPart: () => void = () => {};
  const firstPartAtClient = new Promise<void>((resolve) => (clientHoldsFirstPart = resolve));
  let responseStreamed: boolean | undefined;
  const member = await startHttpMember(t, 'streaming', async (req, res) => {
    if (req.url === '/upload') {
      const hash = createHash('sha256');
      let bytes = 0;
      req.on('data', (chunk: Buffer) => {
        uploadArrives();
        bytes += chunk.length;
        hash.update(chunk);
      });
      req.on('end', () => res.end(JSON.stringify({ bytes, sha256: hash.digest('hex') })));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(download.length) });
    res.write(download.subarray(0, FIRST_PART));
    responseStreamed = await happensWithin(firstPartAtClient, patienceMs);
    res.end(download.subarray(FIRST_PART));
  });
  return { ...member, download, patienceMs, firstUploadBytes, clientHoldsFirstPart, responseStreamed: () => responseStreamed };
}

/**
 * Uploads and then downloads 8 MB through the proxy listening on `port`, each body in two parts:
 * the client sends the rest of its upload only once the member has seen the first part, and the
 * member sends the rest of its answer only once the client holds the first part.
 */
async function checkStreaming(port: number, member: Awaited<ReturnType<typeof startStreamingMember>>) {
  const upload = randomBytes(8 * MB);
  let requestStreamed = false;
  const uploaded = await new Promise<string>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: 'POST', path: '/upload', agent: false, headers: { 'content-length': String(upload.length) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve(text));
      },
    );
    req.on('error', reject);
    req.write(upload.subarray(0, FIRST_PART));
    void happensWithin(member.firstUploadBytes, member.patienceMs).then((streamed) => {
      requestStreamed = streamed;
      req.end(upload.subarray(FIRST_PART));
    });
  });
  const downloaded = await new Promise<Buffer>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/download', agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        member.clientHoldsFirstPart();
      });
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  const expectedUpload = { bytes: upload.length, sha256: createHash('sha256').update(upload).digest('hex') };
  return {
    requestStreamed,
    responseStreamed: member.responseStreamed(),
    uploadWhole: JSON.stringify(JSON.parse(uploaded)) === JSON.stringify(expectedUpload),
    downloadWhole: downloaded.equals(member.download),
  };
}

t.test('bodies stream both ways: each side gets the first part before the other sends the rest', async (t) => {
  const member = await startStreamingMember(t, 10_000);
  const gateway = await gatewayFor(t, [member]);
  t.same(await checkStreaming(gateway.port, member), {
    requestStreamed: true,
    responseStreamed: true,
    uploadWhole: true,
    downloadWhole: true,
  });
});

t.test('the streaming check fails on a proxy that holds bodies whole', async (t) => {
  // Any patience fails here: the buffering proxy passes nothing on before it has a whole body.
  const member = await startStreamingMember(t, 300);
  const buffering = await startBufferingProxy(t, member);
  t.same(
    await checkStreaming(buffering.port, member),
    { requestStreamed: false, responseStreamed: false, uploadWhole: true, downloadWhole: true },
    'it forwards both bodies whole, only never streamed: the test above would fail on it',
  );
});
