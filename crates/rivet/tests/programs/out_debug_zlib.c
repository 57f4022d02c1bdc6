// --compress-debug-sections=zlib: the output's .debug_* sections are SHF_COMPRESSED (zlib), and the
// debug info still maps main to its line (out_debug_zstd.c does the same with zstd).
// cflags: -g -O0
// ldflags: -Wl,--compress-debug-sections=zlib
// check: compressed .debug_info zlib
// check: compressed .debug_str zlib
// check: addr2line main main.c:26
#include <ctype.h>
#include <stdio.h>
struct word_histogram { unsigned letter_counts[26]; unsigned words_seen, longest_word_length; };
static void count_words(struct word_histogram *histogram, const char *text) {
    unsigned current_length = 0;
    for (const char *p = text;; p++) {
        if (isalpha((unsigned char)*p)) {
            histogram->letter_counts[tolower((unsigned char)*p) - 'a']++;
            current_length++;
            continue;
        }
        if (current_length > 0) histogram->words_seen++;
        if (current_length > histogram->longest_word_length) histogram->longest_word_length = current_length;
        current_length = 0;
        if (*p == 0) break;
    }
}
static const char sample_text[] = "Compressed debugging information still describes every line";
int main(void) {
    struct word_histogram histogram = {{0}, 0, 0};
    count_words(&histogram, sample_text);
    printf("%u words, longest %u, e=%u i=%u\n", histogram.words_seen, histogram.longest_word_length,
           histogram.letter_counts['e' - 'a'], histogram.letter_counts['i' - 'a']);
    return 0;
}
