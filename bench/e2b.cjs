// bench/e2b.cjs: what an E2B program sees of holt e2b serve, each figure
// beside its reference measured in the same program (run by bench/e2b.sh).
const { execSync, spawn } = require('node:child_process')
const { Sandbox } = require(process.env.HOLT_E2B_SDK)

const p50 = (a) => [...a].sort((x, y) => x - y)[Math.floor((a.length - 1) / 2)]
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6
const now = () => process.hrtime.bigint()
const fmt = (x) => x.toFixed(2)
const STREAM = 'head -c 100000000 /dev/zero | tr "\\0" a'

async function hostStream() {
  return new Promise((res) => {
    const t0 = now()
    let n = 0
    const c = spawn('/bin/bash', ['-l', '-c', STREAM])
    c.stdout.on('data', (d) => { n += d.length })
    c.on('close', () => res([n, ms(t0)]))
  })
}

// The SDK alone: the same 100 MB as Connect envelopes from a server that
// only replays them, so the SDK's own decoding cost stands beside holt's.
async function sdkFloor(total, times) {
  const http = require('node:http')
  const env = (o, flags = 0) => {
    const j = Buffer.from(JSON.stringify(o))
    const h = Buffer.alloc(5)
    h[0] = flags
    h.writeUInt32BE(j.length, 1)
    return Buffer.concat([h, j])
  }
  const chunk = env({ event: { data: { stdout: Buffer.alloc(256 * 1024, 'a').toString('base64') } } })
  const srv = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/connect+json' })
      res.write(env({ event: { start: { pid: 1 } } }))
      let left = total
      const more = () => {
        while (left > 0) {
          left -= 256 * 1024
          if (!res.write(chunk)) return res.once('drain', more)
        }
        res.write(env({ event: { end: { exited: true, status: 'exit status 0' } } }))
        res.end(env({}, 2))
      }
      more()
    })
  })
  await new Promise((r) => srv.listen(0, '127.0.0.1', r))
  const s = new Sandbox({ sandboxId: 'floor', envdVersion: '0.5.7', envdAccessToken: 'x',
    apiKey: 'x', sandboxUrl: `http://127.0.0.1:${srv.address().port}` })
  let n = 0
  const t = []
  for (let i = 0; i < times; i++) {
    const t0 = now()
    await s.commands.run('floor', { onStdout: (d) => { n += d.length }, timeoutMs: 0 })
    t.push(ms(t0))
  }
  srv.close()
  return [n, p50(t)]
}

let loginEnv

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
  const [, floor] = await sdkFloor(0, 50)
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

  let n = 0
  let t0 = now()
  await sbx.commands.run(STREAM, { onStdout: (d) => { n += d.length }, timeoutMs: 0 })
  const t = ms(t0)
  const [hn, ht] = await hostStream()
  const [fn, ft] = await sdkFloor(100_000_000, 1)
  console.log(`100 MB of commands.run output: ${fmt(n / 1e6 / (t / 1000))} MB/s ` +
    `(${n} bytes in ${fmt(t)} ms); the same command spawned on the host: ` +
    `${fmt(hn / 1e6 / (ht / 1000))} MB/s; the SDK decoding the same ` +
    `stream from a replaying server: ${fmt(fn / 1e6 / (ft / 1000))} MB/s; ` +
    `ratio to that ${fmt(t / ft)}`)
  await sbx.kill()
  require('node:fs').rmSync(loginEnv.HOME, { recursive: true, force: true })
}

main().then(() => process.exit(0), (e) => { console.log(`e2b: ${e.message}`); process.exit(1) })
