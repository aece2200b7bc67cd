"""What makes a block's threads wait for each other: the CTA and cluster barriers
(:mod:`.barriers`) and the sm_90 mbarriers (:mod:`.mbarrier`); and for time: the clocks
(:mod:`.clock`), on which a waiting warp yields to those that can work (:mod:`.clock_wait`)."""
