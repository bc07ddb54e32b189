// The E2B SDK the tests installed (HOLT_E2B_SDK), and small helpers.
const sdk = require(process.env.HOLT_E2B_SDK)

// Run main: "all ok" at the end, or what it throws as "error NAME:
// MESSAGE" and exit 1.
function main(fn, quiet) {
  fn().then(() => { if (!quiet) console.log('all ok'); process.exit(0) }, (e) => {
    console.log(`error ${e && e.name}: ${e && e.message}${e && e.stderr ? ' stderr: ' + e.stderr : ''}`)
    process.exit(1)
  })
}

module.exports = { ...sdk, main }
