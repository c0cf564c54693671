import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A throw-away certificate authority and a server certificate for 127.0.0.1 / localhost, made with the
 * `openssl` command line. Servers under test trust the CA through NODE_EXTRA_CA_CERTS=`caFile`.
 */
export interface TestCert {
  dir: string;
  /** PEM file of the CA (for NODE_EXTRA_CA_CERTS). */
  caFile: string;
  ca: string;
  key: string;
  cert: string;
}

export function opensslAvailable(): boolean {
  const r = spawnSync('openssl', ['version'], { encoding: 'utf8' });
  return r.status === 0;
}

let cached: TestCert | undefined;

export function makeTestCert(): TestCert {
  if (cached) return cached;
  const dir = mkdtempSync(path.join(tmpdir(), 'crm-test-cert-'));
  // Child processes read caFile at their start only; the files go when this process ends.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const f = (name: string) => path.join(dir, name);
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  writeFileSync(f('ca.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\n');
  writeFileSync(
    f('server.ext'),
    'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' +
      'subjectAltName=IP:127.0.0.1,DNS:localhost\nauthorityKeyIdentifier=keyid\n',
  );
  run('req', '-new', ...ec, '-keyout', f('ca.key'), '-out', f('ca.csr'), '-subj', '/CN=CRM webhook tests CA');
  run('x509', '-req', '-in', f('ca.csr'), '-signkey', f('ca.key'), '-out', f('ca.pem'), '-days', '3', '-extfile', f('ca.ext'));
  run('req', '-new', ...ec, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=127.0.0.1');
  run(
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('server.pem'),
    '-days',
    '3',
    '-extfile',
    f('server.ext'),
  );
  cached = {
    dir,
    caFile: f('ca.pem'),
    ca: readFileSync(f('ca.pem'), 'utf8'),
    key: readFileSync(f('server.key'), 'utf8'),
    cert: readFileSync(f('server.pem'), 'utf8'),
  };
  return cached;
}
