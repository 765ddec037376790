/* keeps the xetest library non-empty */
typedef int xe_test_support_nonempty;
