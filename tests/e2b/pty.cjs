// A terminal through the SDK: pty.create, sendInput, resize, exit; and a
// directory watch (watchDir).
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

  const events = []
  await sbx.files.makeDir('watched')
  const w = await sbx.files.watchDir('watched', (e) => events.push(`${e.type} ${e.name}`),
    { recursive: true })
  await sbx.files.write('watched/a.txt', 'x')
  await sbx.commands.run('mkdir watched/sub && echo y >watched/sub/b.txt && rm watched/a.txt')
  // Directories made with files in them at once: the files may be there
  // before the new directory is watched, and must be reported all the same.
  // A tree moved in whole is there before any watch of its own, always.
  await sbx.commands.run('for i in $(seq 30); do mkdir -p watched/d$i/e && echo z >watched/d$i/e/f; done; ' +
    'mkdir -p /tmp/prep/m/n && echo z >/tmp/prep/m/n/g && mv /tmp/prep/m watched/m')
  const want = ['create a.txt', 'write sub/b.txt', 'create sub', 'create sub/b.txt', 'remove a.txt',
    'create m/n', 'create m/n/g']
  for (let i = 1; i <= 30; i++) want.push(`create d${i}/e/f`)
  for (let i = 0; i < 100 && !want.every((e) => events.includes(e)); i++) await sleep(100)
  await w.stop()
  check('watchDir sees writes, new directories, removals, files of new directories',
    want.every((e) => events.includes(e)) &&
    !events.some((e) => e.includes('holt-tmp')), want.filter((e) => !events.includes(e)))
})
