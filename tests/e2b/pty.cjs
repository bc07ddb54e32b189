// A terminal through the SDK: pty.create, sendInput, resize, exit; and the
// clear error of what holt does not serve (watchDir).
const { Sandbox, main } = require('./sdk.cjs')

function check(what, cond, got) {
  if (!cond) throw new Error(`${what}: got ${JSON.stringify(got)}`)
  console.log(`ok ${what}`)
}
const sleep = (ms) => new Promise((res) => setTimeout(res, ms))

main(async () => {
  const sbx = await Sandbox.connect(process.argv[2])
  let out = ''
  const h = await sbx.pty.create({ cols: 80, rows: 24, timeoutMs: 0,
    onData: (d) => { out += Buffer.from(d).toString() } })
  const say = (s) => sbx.pty.sendInput(h.pid, new TextEncoder().encode(s))
  await say('stty size; echo pty-$((6*7))\n')
  for (let i = 0; i < 50 && !out.includes('pty-42'); i++) await sleep(100)
  check('a terminal of 24x80', out.includes('24 80') && out.includes('pty-42'), out)
  await sbx.pty.resize(h.pid, { cols: 100, rows: 30 })
  await say('stty size; exit 5\n')
  const r = await h.wait().catch((e) => e)
  check('resized, and its exit status', out.includes('30 100') && r.exitCode === 5, [out, r.exitCode])
  try {
    await sbx.files.watchDir('/home/user', () => {})
    throw new Error('watchDir worked')
  } catch (e) {
    check('watchDir: a clear error', e.message.includes('does not serve directory watches'), e.message)
  }
})
