// bench/e2b.cjs: what an E2B program sees of holt e2b serve, each figure
// beside its reference measured in the same program (run by bench/e2b.sh).
const { execSync, spawn } = require('node:child_process')
const { Sandbox } = require(process.env.HOLT_E2B_SDK)

const p50 = (a) => [...a].sort((x, y) => x - y)[Math.floor((a.length - 1) / 2)]
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6
const now = () => process.hrtime.bigint()
const fmt = (x) => x.toFixed(2)
const STREAM_BYTES = 100_000_000
const STREAM = `head -c ${STREAM_BYTES} /dev/zero | tr "\\0" a`

async function hostStream() {
  return new Promise((res) => {
    const t0 = now()
    let n = 0
    const c = spawn('/bin/bash', ['-l', '-c', STREAM])
    c.stdout.on('data', (d) => { n += d.length })
    c.on('close', () => res([n, ms(t0)]))
  })
}

// The SDK alone, for the round trip of a command: a server in this
// process answers every Start with a command that printed nothing.
async function sdkFloor(times) {
  const http = require('node:http')
  const srv = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/connect+json' })
      res.write(envelope({ event: { start: { pid: 1 } } }))
      res.write(envelope({ event: { end: { exited: true, status: 'exit status 0' } } }))
      res.end(envelope({}, 2))
    })
  })
  await new Promise((r) => srv.listen(0, '127.0.0.1', r))
  const t = []
  for (let i = 0; i < times; i++) {
    const [, ms1] = await sdkRun(`http://127.0.0.1:${srv.address().port}`)
    t.push(ms1)
  }
  srv.close()
  return p50(t)
}

const { envelope } = require('./e2b-replay.cjs')

// commands.run through the SDK against a server that is not holt: bytes, ms.
async function sdkRun(url) {
  const s = new Sandbox({ sandboxId: 'floor', envdVersion: '0.5.7',
    envdAccessToken: 'x', apiKey: 'x', sandboxUrl: url })
  let n = 0
  const t0 = now()
  await s.commands.run('floor', { onStdout: (d) => { n += d.length }, timeoutMs: 0 })
  return [n, ms(t0)]
}

// The SDK alone, decoding a stream recorded from holt, served by a process
// of its own (bench/e2b-replay.cjs), as it is or re-cut into messages of
// size bytes: MB/s.
async function sdkReplay(file, size) {
  const args = [require('node:path').join(__dirname, 'e2b-replay.cjs'), file]
  if (size) args.push(String(size))
  const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const port = await new Promise((res) => c.stdout.once('data', (d) => res(Number(d))))
    const [n, t] = await sdkRun(`http://127.0.0.1:${port}`)
    return mbs(n, t)
  } catch (e) {
    throw new Error(`the SDK alone, on the recorded stream: ${e.message}`)
  } finally {
    c.kill()
  }
}

// holt's server alone, curl as its client: Start of cmd in sbx, the reply
// to out (a file, or /dev/null). MB/s of the command's output.
async function curlStream(sbx, cmd, out) {
  const api = process.env.E2B_API_URL
  const req = require('node:path').join(tmp, 'start.req')
  require('node:fs').writeFileSync(req, envelope({ process:
    { cmd: '/bin/bash', args: ['-l', '-c', cmd], envs: {} } }))
  return new Promise((res, rej) => {
    let o = ''
    const c = spawn('curl', ['-s', '-o', out, '-w', '%{http_code} %{time_total}',
      '-H', `E2b-Sandbox-Id: ${sbx.sandboxId}`,
      '-H', `X-Access-Token: ${sbx.envdAccessToken}`,
      '-H', 'Content-Type: application/connect+json',
      '--data-binary', `@${req}`, `${api}/process.Process/Start`])
    c.stdout.on('data', (d) => { o += d })
    c.on('close', (code) => code === 0 && o.startsWith('200 ') ?
      res(mbs(STREAM_BYTES, Number(o.slice(4)) * 1000)) :
      rej(new Error(`curl: exit ${code}, ${o}`)))
  })
}

const mbs = (bytes, msecs) => bytes / 1e6 / (msecs / 1000)
const fs = require('node:fs')
const tmp = fs.mkdtempSync(require('node:path').join(require('node:os').tmpdir(), 'holt-bench-e2b.'))
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }))

let loginEnv
const curlOk = require('node:child_process').spawnSync('curl', ['--version']).status === 0

// The messages of a recorded stream: how many, their mean size.
function countMessages(file) {
  const b = fs.readFileSync(file)
  let n = 0
  for (let i = 0; i < b.length; i += 5 + b.readUInt32BE(i + 1)) n++
  return { n, mean: b.length / n }
}

async function main() {
  const creates = []
  let sbx
  for (let i = 0; i < 3; i++) {
    const t0 = now()
    const s = await Sandbox.create({ timeoutMs: 600_000 })
    await s.commands.run('true')
    creates.push(ms(t0))
    if (sbx) await s.kill(); else sbx = s
  }
  const runs = [], host = [], login = []
  // As in the sandbox: an empty home, a plain environment.
  loginEnv = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8',
    HOME: require('node:fs').mkdtempSync('/tmp/holt-bench-home.') }
  for (let turn = 0; turn < 5; turn++) {
    for (let i = 0; i < 10; i++) {
      let t0 = now()
      await sbx.commands.run('true')
      runs.push(ms(t0))
      t0 = now()
      execSync('true')
      host.push(ms(t0))
      t0 = now()
      execSync('/bin/bash -l -c true', { env: loginEnv })
      login.push(ms(t0))
    }
  }
  const floor = await sdkFloor(50)
  console.log(`commands.run("true") p50 ${fmt(p50(runs))} ms; ` +
    `execSync("true") on the host ${fmt(p50(host))} ms; ` +
    `ratio ${fmt(p50(runs) / p50(host))}; execSync of what the SDK runs, ` +
    `"/bin/bash -l -c true" (empty HOME), ${fmt(p50(login))} ms, ratio ` +
    `${fmt(p50(runs) / p50(login))}; the SDK alone against a replaying ` +
    `server ${fmt(floor)} ms`)
  console.log(`create -> first command p50 ${fmt(p50(creates))} ms ` +
    '(E2B publishes ~150 ms for create alone)')

  const pauses = [], resumes = []
  for (let i = 0; i < 3; i++) {
    let t0 = now()
    await sbx.pause()
    pauses.push(ms(t0))
    t0 = now()
    sbx = await Sandbox.connect(sbx.sandboxId)
    await sbx.commands.run('true')
    resumes.push(ms(t0))
  }
  console.log(`pause p50 ${fmt(p50(pauses))} ms; connect (resume) -> first ` +
    `command p50 ${fmt(p50(resumes))} ms (E2B publishes ~1 s resume)`)

  // 100 MB, three times each, interleaved (the machine's load moves):
  // through the SDK; holt alone (curl); the host; the SDK alone.
  const rec = require('node:path').join(tmp, 'stream.rec')
  await curlStream(sbx, STREAM, rec)
  const msgs = countMessages(rec)
  const sdk = [], curl = [], spawned = [], alone = [], small = [], big = []
  for (let i = 0; i < 3; i++) {
    let n = 0
    const t0 = now()
    await sbx.commands.run(STREAM, { onStdout: (d) => { n += d.length }, timeoutMs: 0 })
      .catch((e) => { throw new Error(`the SDK through holt: ${e.message}`) })
    sdk.push(mbs(n, ms(t0)))
    if (curlOk) curl.push(await curlStream(sbx, STREAM, '/dev/null'))
    const [hn, ht] = await hostStream()
    spawned.push(mbs(hn, ht))
    alone.push(await sdkReplay(rec))
    small.push(await sdkReplay(rec, 65536))
    big.push(await sdkReplay(rec, 1 << 20))
  }
  console.log(`100 MB of commands.run output (p50 of 3, MB/s): through the ` +
    `SDK ${fmt(p50(sdk))}; holt's server alone, curl as the client, ` +
    (curlOk ? fmt(p50(curl)) : '(no curl)') + `; the same command ` +
    `spawned on the host ${fmt(p50(spawned))}; budget 100`)
  console.log(`  the SDK alone, decoding holt's recorded stream (${msgs.n} ` +
    `messages, ${fmt(msgs.mean / 1024)} KiB each) from a replaying process: ` +
    `${fmt(p50(alone))}; the same in 64 KiB messages ${fmt(p50(small))}, ` +
    `in 1 MiB messages ${fmt(p50(big))}`)
  console.log(`  ratios: SDK through holt / SDK alone ${fmt(p50(sdk) / p50(alone))}; ` +
    (curlOk ? `holt alone (curl) / host spawn ${fmt(p50(curl) / p50(spawned))}; ` +
    `holt alone (curl) / SDK alone ${fmt(p50(curl) / p50(alone))}` : ''))
  await sbx.kill()
  fs.rmSync(loginEnv.HOME, { recursive: true, force: true })
}

main().then(() => process.exit(0), (e) => { console.log(`e2b: ${e.message}`); process.exit(1) })
