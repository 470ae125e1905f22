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
	volatile long int          right;                /*     0     8 */
	volatile long int          left;                 /*     8     8 */

	/* size: 16, cachelines: 1, members: 2 */
	/* last cacheline: 16 bytes */
};
