// --compress-debug-sections=zlib: the output's .debug_* sections are SHF_COMPRESSED (zlib), and the
// debug info still maps main to its line.
// cflags: -g -O0
// ldflags: -Wl,--compress-debug-sections=zlib
// check: compressed .debug_info zlib
// check: compressed .debug_str zlib
// check: addr2line main main.c:28
#include <stdio.h>
#include <string.h>
struct account_record { const char *holder_name; long balance_in_cents; int branch_number; };
struct transfer_request { struct account_record *from_account, *to_account; long amount_in_cents; };
enum transfer_outcome { TRANSFER_COMPLETED, TRANSFER_INSUFFICIENT_FUNDS, TRANSFER_SAME_ACCOUNT };
static enum transfer_outcome perform_transfer(struct transfer_request *request) {
    if (request->from_account == request->to_account) return TRANSFER_SAME_ACCOUNT;
    if (request->from_account->balance_in_cents < request->amount_in_cents) return TRANSFER_INSUFFICIENT_FUNDS;
    request->from_account->balance_in_cents -= request->amount_in_cents;
    request->to_account->balance_in_cents += request->amount_in_cents;
    return TRANSFER_COMPLETED;
}
static const char *describe_outcome(enum transfer_outcome outcome) {
    switch (outcome) {
    case TRANSFER_COMPLETED: return "completed";
    case TRANSFER_INSUFFICIENT_FUNDS: return "insufficient funds";
    default: return "same account";
    }
}
static size_t holder_name_length(const struct account_record *account) { return strlen(account->holder_name); }
int main(void) {
    struct account_record alice = {"alice", 10000, 1}, bob = {"bob", 500, 2};
    struct transfer_request first = {&alice, &bob, 2500}, second = {&bob, &alice, 999999}, third = {&bob, &bob, 1};
    printf("%s\n", describe_outcome(perform_transfer(&first)));
    printf("%s\n", describe_outcome(perform_transfer(&second)));
    printf("%s\n", describe_outcome(perform_transfer(&third)));
    printf("%ld %ld %zu\n", alice.balance_in_cents, bob.balance_in_cents, holder_name_length(&alice));
    return 0;
}
