/* pasted from lever layout report's suggestions (/work/wt-layout-instr/bench/results/layout-raw/designed.report) */
struct record {
	long int                   hot_a;                /*     0     8 */
	long int                   hot_b;                /*     8     8 */
	long int                   hot_c;                /*    16     8 */
	long int                   hot_d;                /*    24     8 */
	char                       cold_1[56];           /*    32    56 */
	/* --- cacheline 1 boundary (64 bytes) was 24 bytes ago --- */
	char                       cold_2[56];           /*    88    56 */
	/* --- cacheline 2 boundary (128 bytes) was 16 bytes ago --- */
	char                       cold_3[56];           /*   144    56 */
	/* --- cacheline 3 boundary (192 bytes) was 8 bytes ago --- */
	char                       cold_4[56];           /*   200    56 */

	/* size: 256, cachelines: 4, members: 8 */
};
struct counters {
	volatile long int          left __attribute__((aligned(64))); /*     0     8 */

	/* XXX 56 bytes hole, try to pack */

	/* --- cacheline 1 boundary (64 bytes) --- */
	volatile long int          right __attribute__((aligned(64))); /*    64     8 */

	/* size: 128, cachelines: 2, members: 2 */
	/* sum members: 16, holes: 1, sum holes: 56 */
	/* padding: 56 */
};
