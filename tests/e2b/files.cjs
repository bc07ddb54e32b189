// The files API: text, binary, large, list, makeDir, rename, remove, exists.
const crypto = require('node:crypto')
const { Sandbox, NotFoundError, main } = require('./sdk.cjs')

function check(what, cond, got) {
  if (!cond) throw new Error(`${what}: got ${JSON.stringify(got)}`)
  console.log(`ok ${what}`)
}

main(async () => {
  const sbx = await Sandbox.connect(process.argv[2])
  const info = await sbx.files.write('notes/a.txt', 'héllo\nworld\n')
  check('write text', info.path === '/home/user/notes/a.txt' && info.type === 'file', info)
  check('read text', await sbx.files.read('/home/user/notes/a.txt') === 'héllo\nworld\n', null)

  const bin = crypto.randomBytes(256 * 1024)
  bin[0] = 0; bin[1] = 0xff
  await sbx.files.write('notes/b.bin', bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.length))
  const back = Buffer.from(await sbx.files.read('notes/b.bin', { format: 'bytes' }))
  check('binary round trip', back.equals(bin), back.length)

  const big = crypto.randomBytes(24 * 1024 * 1024)
  await sbx.files.write('/tmp/big.bin', new Blob([big]))
  const bigBack = Buffer.from(await sbx.files.read('/tmp/big.bin', { format: 'bytes' }))
  check('24 MB multipart round trip', bigBack.equals(big), bigBack.length)
  await sbx.files.write('/tmp/big2.bin', new Blob([big]), { useOctetStream: true })
  const sum = await sbx.commands.run('sha256sum /tmp/big2.bin')
  const want = crypto.createHash('sha256').update(big).digest('hex')
  check('24 MB octet-stream upload', sum.stdout.startsWith(want), sum.stdout)

  await sbx.files.write([{ path: 'multi/1.txt', data: 'one' }, { path: 'multi/2.txt', data: 'two' }])
  const names = (await sbx.files.list('multi')).map((e) => e.name).sort()
  check('write several files at once', names.join() === '1.txt,2.txt', names)

  const list = await sbx.files.list('notes')
  const byName = Object.fromEntries(list.map((e) => [e.name, e]))
  check('list', list.length === 2 && byName['a.txt'].size === 13 &&
    byName['b.bin'].type === 'file' && byName['a.txt'].path === '/home/user/notes/a.txt', list)
  const deep = await sbx.files.list('/home/user', { depth: 2 })
  check('list depth 2', deep.some((e) => e.path === '/home/user/notes/a.txt'), deep.length)

  check('makeDir', await sbx.files.makeDir('made/deep/er') === true, null)
  check('makeDir of an existing one', await sbx.files.makeDir('made/deep/er') === false, null)
  const dir = await sbx.files.getInfo('made/deep')
  check('getInfo of a directory', dir.type === 'dir' && dir.name === 'deep', dir)

  const moved = await sbx.files.rename('notes/a.txt', 'made/a.txt')
  check('rename', moved.path === '/home/user/made/a.txt', moved)
  check('exists after rename', await sbx.files.exists('made/a.txt') &&
    !(await sbx.files.exists('notes/a.txt')), null)
  await sbx.files.remove('made')
  check('remove a tree', !(await sbx.files.exists('made')), null)
  try {
    await sbx.files.read('no/such/file')
    throw new Error('read of a missing file worked')
  } catch (e) {
    check('read of a missing file', e instanceof NotFoundError, [e.name, e.message])
  }
  try {
    await sbx.files.write('/etc/passwd', 'x')
    throw new Error('a write outside the sandbox\'s roots worked')
  } catch (e) {
    check('write outside the roots refused', !(e.message || '').includes('worked'), e.message)
  }
})
