/*
 * sha256: FIPS 180-4 digests of known inputs, through the one-shot and the streaming calls,
 * for every length 0-299 (one to six blocks, every padding case), on whichever block the
 * processor chooses (the SHA extensions where it has them; the portable one under valgrind,
 * which hides them).
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "sha256.h"

static void test_known(void **state)
{
    (void)state;
    char hex[65];
    sha256_hex("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha256_hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    static const char two[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(two, sizeof two - 1, hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* a million 'a', in pieces of 1000 */
    struct sha256 s;
    unsigned char a[1000], d[32];
    memset(a, 'a', sizeof a);
    sha256_init(&s);
    for (int i = 0; i < 1000; i++)
        sha256_update(&s, a, sizeof a);
    sha256_final(&s, d);
    static const unsigned char want[32] = {0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92,
                                           0x81, 0xa1, 0xc7, 0xe2, 0x84, 0xd7, 0x3e, 0x67,
                                           0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97, 0x20, 0x0e,
                                           0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0};
    assert_memory_equal(d, want, 32);
}

/* The digests of every prefix of 300 bytes (i * 7 + 1), their hex joined and digested: the
 * expected value is Python's hashlib over the same. Each prefix also streamed in 1-, 3- and
 * 64-byte pieces must give its one-shot digest. */
static void test_lengths(void **state)
{
    (void)state;
    unsigned char b[300];
    for (int i = 0; i < 300; i++)
        b[i] = (unsigned char)(i * 7 + 1);
    struct sha256 all;
    sha256_init(&all);
    for (size_t n = 0; n < sizeof b; n++) {
        char hex[65];
        sha256_hex(b, n, hex);
        sha256_update(&all, hex, 64);
        static const size_t pieces[] = {1, 3, 64};
        for (size_t k = 0; k < 3; k++) {
            struct sha256 s;
            unsigned char d[32];
            char h2[65];
            sha256_init(&s);
            for (size_t at = 0; at < n; at += pieces[k])
                sha256_update(&s, b + at, n - at < pieces[k] ? n - at : pieces[k]);
            sha256_final(&s, d);
            for (int i = 0; i < 32; i++)
                sprintf(h2 + 2 * i, "%02x", d[i]);
            assert_string_equal(h2, hex);
        }
    }
    unsigned char d[32];
    char hex[65];
    sha256_final(&all, d);
    for (int i = 0; i < 32; i++)
        sprintf(hex + 2 * i, "%02x", d[i]);
    assert_string_equal(hex, "3bc92ee4a0d78ef0162a2aa3e8dd055dbaeccc6ee907c0afda51c43a302d31c3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known),
        cmocka_unit_test(test_lengths),
    };
    return cmocka_run_group_tests_name("sha256", tests, NULL, NULL);
}
