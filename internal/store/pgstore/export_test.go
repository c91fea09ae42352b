package pgstore

// ClaimPushSQL is the claim sweep's statement, for plan tests.
const ClaimPushSQL = claimPushSQL
